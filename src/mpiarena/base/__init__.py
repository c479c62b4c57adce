"""The base every layer stands on: names, units, paths, statuses, records, errors."""
