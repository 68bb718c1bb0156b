"""A real single-node SLURM cluster on this machine, for the SLURM executor test.

Debian's own packages (slurm-wlm, munge) run munged, slurmctld and slurmd as root with a
generated slurm.conf: no systemd, cgroups, accounting database or network beyond loopback.
What was measured to matter on these machines:

* the config must sit at the built-in path /etc/slurm/slurm.conf: the job step strips
  ``SLURM_CONF`` before it calls ``srun``;
* ``DefMemPerCPU``: without it a job that names no memory takes the whole node;
* without slurmdbd ``sacct`` fails, so Snakemake must poll with ``--slurm-status-command
  squeue`` (MinJobAge stays at its default 300 s so squeue still sees finished jobs).

:class:`LocalSlurm` starts only what is not already running, stops exactly the daemons it
started (by PID) and removes the config link it made; :func:`why_not` says why this machine
cannot host one (the test then skips with that reason).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

CONF = Path("/etc/slurm/slurm.conf")
PACKAGES = ["slurm-wlm", "munge"]
DAEMONS = ["munged", "slurmctld", "slurmd"]
PORTS = (6817, 6818)  # slurmctld, slurmd


def _port_busy(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _running(name: str) -> bool:
    return subprocess.run(["pgrep", "-x", name], capture_output=True).returncode == 0


def why_not() -> str | None:
    """``None`` when a private SLURM can be started here, else the reason it cannot."""
    if os.name != "posix" or os.geteuid() != 0:
        return "needs root: installs slurm-wlm and munge and runs slurmctld/slurmd"
    if not shutil.which("apt-get") and not shutil.which("slurmctld"):
        return "slurm-wlm is not installed and there is no apt-get to install it"
    if CONF.exists() or CONF.is_symlink():
        return f"{CONF} already exists (a real cluster?): not replacing it"
    for name in ("slurmctld", "slurmd"):
        if _running(name):
            return f"a {name} is already running on this machine"
    for port in PORTS:
        if _port_busy(port):
            return f"port {port} (SLURM) is in use"
    return None


def install() -> None:
    """apt-get install the packages when a daemon is missing (apt lists refreshed on demand)."""
    if all(shutil.which(d) for d in DAEMONS) and shutil.which("sbatch"):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-q", *PACKAGES]
    if subprocess.run(cmd, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, check=True, capture_output=True)
        subprocess.run(cmd, env=env, check=True, capture_output=True)


def _mem_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024 * 9 // 10
    raise RuntimeError("no MemTotal in /proc/meminfo")


def slurm_conf(base: Path, host: str, cpus: int, mem_mb: int) -> str:
    """The cluster's slurm.conf; ``cpus`` above the machine's cores oversubscribe them
    (``SlurmdParameters=config_overrides``: slurmd takes the node as configured)."""
    return f"""\
ClusterName=biasrepro-ci
SlurmdParameters=config_overrides
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation={base}/state/ctld
SlurmdSpoolDir={base}/state/d
SlurmctldPidFile={base}/pid/slurmctld.pid
SlurmdPidFile={base}/pid/slurmd.pid
SlurmctldLogFile={base}/log/slurmctld.log
SlurmdLogFile={base}/log/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={base}/log/jobcomp.txt
MinJobAge=300
KillWait=5
NodeName={host} CPUs={cpus} RealMemory={mem_mb} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP DefMemPerCPU=1000
"""


class LocalSlurm:
    """Context manager: a running single-node cluster whose files live under ``base``."""

    def __init__(self, base: Path, cpus: int | None = None) -> None:
        self.base = base
        self.cpus = cpus or os.cpu_count() or 1
        self.host = socket.gethostname().split(".")[0]
        self.procs: dict[str, subprocess.Popen] = {}
        self.linked = False

    @property
    def jobcomp(self) -> Path:
        """One line per finished job (JobCompType=jobcomp/filetxt): the cluster's own record."""
        return self.base / "log" / "jobcomp.txt"

    def _spawn(self, name: str, cmd: list[str]) -> None:
        log = open(self.base / "log" / f"{name}.out", "wb")  # noqa: SIM115 (the daemon's)
        self.procs[name] = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
        log.close()

    def _wait(self, what: str, ok, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not ok():
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    out = (self.base / "log" / f"{name}.out").read_text(errors="replace")
                    raise RuntimeError(f"{name} exited ({proc.returncode}): {out[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"SLURM: {what} not reached in {timeout} s")
            time.sleep(0.1)

    def __enter__(self) -> LocalSlurm:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _munge_ok(self) -> bool:
        munge = subprocess.run(["munge", "-n"], capture_output=True)
        return munge.returncode == 0 and subprocess.run(
            ["unmunge"], input=munge.stdout, capture_output=True).returncode == 0

    def _start(self) -> None:
        for sub in ("state/ctld", "state/d", "pid", "log"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        conf = self.base / "slurm.conf"
        conf.write_text(slurm_conf(self.base, self.host, self.cpus, _mem_mb()))
        if not self._munge_ok():
            if not Path("/etc/munge/munge.key").exists():
                subprocess.run(["mungekey", "--create"], check=True, capture_output=True)
            Path("/run/munge").mkdir(parents=True, exist_ok=True)
            shutil.chown("/run/munge", "munge", "munge")
            self._spawn("munged", ["setpriv", "--reuid=munge", "--regid=munge",
                                   "--init-groups", "/usr/sbin/munged", "-F"])
            self._wait("munge credentials", self._munge_ok)
        CONF.parent.mkdir(parents=True, exist_ok=True)
        CONF.symlink_to(conf)
        self.linked = True
        self._spawn("slurmctld", ["slurmctld", "-D", "-i"])
        self._spawn("slurmd", ["slurmd", "-D"])
        self._wait("an idle node", lambda: subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%t"], capture_output=True, text=True
        ).stdout.strip() == "idle")

    def stop(self) -> None:
        """SIGTERM each daemon this object started (slurmd first), SIGKILL after 15 s."""
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs.clear()
        if self.linked:
            CONF.unlink(missing_ok=True)
            self.linked = False
