"""The variables that tag every process a job or its daemons start, so that cleanup finds them
however they were started (a launcher that passes on only named variables is given these)."""

from __future__ import annotations

TOKEN_VAR = "MPIARENA_JOB"  # one per job
RUN_VAR = "MPIARENA_RUN"  # one per run: the final sweep
OWNER_VAR = "MPIARENA_OWNER"  # the mpiarena process that started a job or daemon: owners.Owner
