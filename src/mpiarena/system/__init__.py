"""Processes on this machine: run, poll, own them, and the machine's load."""
