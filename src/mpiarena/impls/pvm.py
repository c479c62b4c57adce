"""PVM 3.4: a pvmd of its own for each job (own PVM_TMP), the first task spawns the others."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from ..base import core_env, tools
from ..base.users import RankUser
from ..cluster.placement import Placement
from ..model.whatran import Cvar
from ..system.procs import as_user, last_words
from .base import FamilyDefaults, Found, Implementation, Launch

ROOT = Path("/usr/lib/pvm3")
HEADER = Path("/usr/include/pvm3.h")


class PvmDaemon:
    """Start pvmd with a generated host file and a private PVM_TMP; halt it afterwards."""

    def __init__(self, pvmd: Path, workdir: Path, user: RankUser | None,
                 placement: Placement | None):
        self.pvmd = pvmd
        name = f"pvm-{uuid.uuid4().hex[:12]}"
        self.tmp = workdir / name
        self.hosts = workdir / f"{name}.hosts"
        self.log = workdir / f"{name}.log"
        self.user, self.workdir, self.placement = user, workdir, placement
        self.proc: subprocess.Popen[bytes] | None = None

    def up(self, env: dict[str, str]) -> dict[str, str]:
        self.tmp.mkdir(mode=0o700)
        if self.user is not None:
            os.chown(self.tmp, self.user.uid, self.user.gid)
        # ep: where pvm_spawn finds the group server (the core is spawned by absolute path);
        # dx: where pvmd is on the other nodes, reached through the cluster's remote shell
        used = self.placement.used if self.placement else ()
        hosts = [n.name for n in used] if len(used) > 1 else ["localhost"]
        self.hosts.write_text(f"* ep={ROOT / 'lib'} dx={ROOT / 'lib' / 'pvmd'}\n" +
                              "".join(f"{h}\n" for h in hosts))
        self.hosts.chmod(0o644)
        extra = {"PVM_ROOT": str(ROOT), "PVM_TMP": str(self.tmp)}
        if self.placement:
            extra["PVM_RSH"] = str(self.placement.rsh)
        run_env = {**env, **extra}
        if self.user is not None:
            run_env.update(HOME=self.user.home, USER=self.user.name, LOGNAME=self.user.name)
        argv = [str(self.pvmd), str(self.hosts)]
        if self.placement:
            argv = self.placement.on_head(argv, self.workdir)
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=run_env,
                cwd=self.workdir, start_new_session=True, **as_user(self.user, self.placement))
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:  # pvmd prints its address file once it is up
            if self.proc.poll() is not None:
                break
            if self.log.read_text(errors="replace").strip() and self._all_hosts(run_env):
                return extra
            time.sleep(0.02)
        self.down()
        raise RuntimeError(f"pvmd did not start: {last_words(self.log)}")

    def _all_hosts(self, env: dict[str, str]) -> bool:
        """True once pvmd has added every node of the placement (it does so in the background)."""
        if self.placement is None or len(self.placement.used) < 2:
            return True
        argv = [str(self.pvmd.parent / "pvm")]
        argv = self.placement.on_head(argv, self.workdir)
        done = subprocess.run(argv, input="conf\n", capture_output=True, text=True, env=env,
                              cwd=self.workdir, timeout=10, **as_user(self.user, self.placement))
        return f"{len(self.placement.used)} hosts" in done.stdout

    def down(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # pvmd halts its tasks and removes its files
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        shutil.rmtree(self.tmp, ignore_errors=True)


class Pvm(FamilyDefaults):
    name = "pvm"
    title = "PVM"
    order = 50
    mpi = False
    kernel_modules = ("mod_pvm.c", "ext_none.c", "apps.c")
    link_flags = ("-lgpvm3", "-lpvm3")
    install_hint = "apt-get install pvm pvm-dev"
    window_timing = False  # see plan.timing

    def detect(self) -> list[Found]:
        """PVM where its header is (pvm-dev) and pvmd on PATH (pvm), its console beside it;
        the core is built with the C compiler on PATH (building says so where none is)."""
        pvmd = tools.find("pvmd")
        if not HEADER.exists() and pvmd is None:
            return []
        console = pvmd is None or (pvmd.parent / "pvm").exists()  # beside the pvmd found
        missing = [name for name, there in ((str(HEADER), HEADER.exists()),
                                            ("pvmd", pvmd is not None),
                                            ("the console pvm", console)) if not there]
        if missing or pvmd is None:
            return [Found("pvm", problem=f"PVM is only half installed: {', '.join(missing)} "
                          "missing", fix=self.install_hint)]
        version = next((ln.split('"')[1] for ln in HEADER.read_text().splitlines()
                        if ln.startswith("#define") and "PVM_VER" in ln), "3")
        impl_id = f"pvm-{version}"
        cc = tools.compiler() or Path(tools.COMPILERS[0])
        return [Found(impl_id, Implementation(impl_id, "pvm", version, "debian", cc, pvmd))]

    def launch(self, impl: Implementation, np: int, binding: str, as_root: bool) -> Launch:
        return Launch([], {core_env.NP: str(np), core_env.BIND: binding})

    def hosts_launch(self, impl: Implementation, placement: Placement) -> Launch:
        hosts = [n.name for n, r in zip(placement.nodes, placement.ranks, strict=True)
                 for _ in range(r)]
        env = {core_env.NP: str(len(hosts)), core_env.BIND: "none"}
        if len(placement.used) > 1:  # task r on its node; on one node pvmd places them
            env[core_env.PVM_HOSTS] = ",".join(hosts)
        return Launch([], env, binding="none")

    def wrapper_flags(self, impl: Implementation) -> list[str]:
        return ["--version"]

    def runtime(self, impl: Implementation, np: int, workdir: Path, user: RankUser | None,
                env: dict[str, str], placement: Placement | None) -> PvmDaemon:
        return PvmDaemon(impl.launcher, workdir, user, placement)


    def transport(self, impl: Implementation, cvars: tuple[Cvar, ...] | None, version: str,
                  env: Mapping[str, str], said: str = "") -> tuple[str, str]:
        """The route the core asks pvm_setopt for (kernels/mod_pvm.c) and its packing."""
        direct = env.get(core_env.PVM_ROUTE) == "direct"
        route = ("direct task-to-task TCP (PvmRouteDirect)" if direct else
                 "through the pvmd daemons (PvmRouteDefault)")
        encoding = env.get(core_env.PVM_ENCODING) or "xdr"
        return (f"{route}, {encoding} encoding",
                f"{core_env.PVM_ROUTE}, {core_env.PVM_ENCODING}: the core's pvm_setopt(PvmRoute)")


FAMILY = Pvm()
