"""The one exception type the command line turns into a one-line message and exit status 2."""


class ArenaError(Exception):
    """A problem the user can fix; the message says what and how."""
