"""Run a plan: launch jobs, hand them cells in the planned order, store what they measure."""
