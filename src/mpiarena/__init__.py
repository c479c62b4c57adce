"""mpiarena: message-passing libraries side by side."""

__version__ = "0.1.0"
