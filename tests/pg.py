"""A throwaway PostgreSQL server for the tests: Debian's initdb/pg_ctl run as the `postgres`
user on a free 127.0.0.1 port, its unix socket in the cluster's own temporary folder, stopped
by its pid when the session ends (also after a failure). TCP logins are checked with
scram-sha-256 passwords (the superuser `postgres` has PASSWORD), as on a real server. Tests that
need it skip with the reason only when the server binaries are not installed (CI
installs Debian's `postgresql`).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

BIN_ROOT = Path("/usr/lib/postgresql")
PASSWORD = "throwaway-superuser"  # the test cluster's superuser password (never a user's)


def pg_bin() -> Path | None:
    """The newest installed server's bin folder (Debian: /usr/lib/postgresql/<major>/bin)."""
    found = sorted(
        (p / "bin" for p in BIN_ROOT.glob("*") if (p / "bin" / "initdb").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    return found[-1] if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(*args: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else list(args)


@dataclass
class Server:
    folder: Path
    port: int
    pid: int

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def admin(self):
        """A psycopg connection (autocommit) of the superuser to the `postgres` database."""
        import psycopg

        return psycopg.connect(
            host="127.0.0.1",
            port=self.port,
            user="postgres",
            password=PASSWORD,
            dbname="postgres",
            autocommit=True,
        )

    def create_database(self, password: str | None = None) -> str:
        """A new empty database and its URL: the superuser's, or with `password` a new role's
        that owns the database and logs in with that password (checked by the server).
        Its collation is ICU's en-US, as on a typical server ("a" < "B" < "b", "_" ignored):
        nothing hindcast exports may depend on the server's ordering."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        owner = "postgres" if password is None else f"u_{name}"
        with self.admin() as c:
            if password is not None:
                c.execute(f"CREATE ROLE \"{owner}\" LOGIN PASSWORD '{password}'")
            c.execute(
                f'CREATE DATABASE "{name}" OWNER "{owner}" TEMPLATE template0 ENCODING \'UTF8\' '
                "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
            )
        return f"postgresql+psycopg://{owner}:{password or PASSWORD}@127.0.0.1:{self.port}/{name}"


def start(bin_dir: Path) -> Server:
    folder = Path(tempfile.mkdtemp(prefix="hindcast-pg-"))
    os.chmod(folder, 0o755)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    try:
        return _start_in(bin_dir, folder)
    except (
        BaseException
    ):  # nothing left behind: a half-started server is stopped, the folder removed
        pid_file = folder / "data" / "postmaster.pid"
        if pid_file.exists():
            stop(Server(folder, 0, int(pid_file.read_text().split()[0])))
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _start_in(bin_dir: Path, folder: Path) -> Server:
    data, port = folder / "data", _free_port()
    (folder / "pw").write_text(PASSWORD)
    if os.geteuid() == 0:
        shutil.chown(folder / "pw", "postgres", "postgres")
    subprocess.run(
        _as_postgres(
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            f"--pwfile={folder / 'pw'}",
            "-E",
            "UTF8",
            "--locale=en_US.UTF-8" if _has_locale("en_US.utf8") else "--locale=C.UTF-8",
        ),
        check=True,
        capture_output=True,
    )
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off -c max_connections=200"
    )
    subprocess.run(
        _as_postgres(
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(folder / "log"),
            "-w",
            "-t",
            "60",
            "start",
        ),
        check=True,
        capture_output=True,
    )
    pid = int((data / "postmaster.pid").read_text().split()[0])
    return Server(folder, port, pid)


def _has_locale(name: str) -> bool:
    out = (
        subprocess.run(["locale", "-a"], capture_output=True, text=True, check=False)
        .stdout.lower()
        .split()
    )
    return name in out


def stop(server: Server) -> None:
    try:
        os.kill(server.pid, signal.SIGINT)  # fast shutdown
        for _ in range(200):
            os.kill(server.pid, 0)
            time.sleep(0.05)
        os.kill(server.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    shutil.rmtree(server.folder, ignore_errors=True)
