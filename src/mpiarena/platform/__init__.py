"""Where and with what: the core's build, the program's build, the plan, doctor."""
