"""Reports: the terminal summary and exports."""
