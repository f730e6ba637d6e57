"""nginx in front of a running moonshot, as a host runs it: Debian's nginx with the shipped
``deploy/nginx/moonshot.conf`` rendered with free loopback ports, a test CA's certificate (trustme)
and its own files in a given directory; started with ``daemon off`` and stopped by its process id.

The proxy tests (``tests/e2e/test_proxy_tls.py``) and ``benchmarks/abuse.py --via-nginx`` start it
through :func:`start`; moonshot must trust 127.0.0.1 (``serve --trusted-proxy 127.0.0.1/32``),
the address nginx connects from. :func:`missing` says why nginx cannot be used here (None: it can).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "deploy" / "nginx" / "moonshot.conf"
NGINX = os.environ.get("MOONSHOT_NGINX", "/usr/sbin/nginx")
STREAM_MODULE = Path("/usr/lib/nginx/modules/ngx_stream_module.so")
HOST = "localhost"  # the name on the test certificate (and 127.0.0.1)


def nginx_path() -> str | None:
    return NGINX if Path(NGINX).exists() else shutil.which("nginx")


def missing() -> str | None:
    """Why nginx (with its stream module) cannot be started here; None when it can."""
    if nginx_path() is None:
        return "no nginx: apt-get install nginx libnginx-mod-stream (make nginx does it as root)"
    if not STREAM_MODULE.exists():
        return "nginx has no stream module: apt-get install libnginx-mod-stream (make nginx does it as root)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spki_hash(pem: bytes) -> str:
    """base64(SHA-256(SubjectPublicKeyInfo)) of a certificate: what Chromium's
    ``--ignore-certificate-errors-spki-list`` trusts (that key, no other)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    key = x509.load_pem_x509_certificate(pem).public_key()
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def render(template: str, values: dict[str, str]) -> str:
    """The shipped configuration with these ports, certificate and files: each placeholder must be
    in the file as shipped (so the file that is run is the file a host copies)."""
    out = template
    for old, new in values.items():
        if old not in out:
            raise AssertionError(f"deploy/nginx/moonshot.conf no longer has {old!r}")
        out = out.replace(old, new)
    return out


@dataclass
class Nginx:
    """A running nginx: its listening ports (``https``: the web app, SSE, ``/trend/``; ``sessions``
    and ``kierki``: TCP with the PROXY protocol), the test CA that signed its certificate."""

    proc: subprocess.Popen[bytes]
    https: int
    plain: int
    sessions: int
    kierki: int
    ca_file: Path
    spki: list[str] = field(default_factory=list)  # the test CA's and the certificate's key hashes
    logs: Path = Path()

    def ready(self) -> bool:
        """Is it listening? (It binds every listener before it accepts on any.) Raises when it stopped."""
        if self.proc.poll() is not None:
            log = self.logs / "error.log"
            raise RuntimeError(f"nginx stopped: {log.read_text() if log.exists() else ''}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.https), timeout=1):
            return True
        return False

    def wait(self, timeout: float = 30.0) -> None:
        """Until it listens (polled: nginx says nothing when it is ready)."""
        deadline = time.monotonic() + timeout
        while not self.ready():
            if time.monotonic() > deadline:
                raise RuntimeError("nginx did not listen")
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()  # nginx's fast shutdown
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start(workdir: Path, http: int, trend: int, sessions: int, kierki: int | None = None) -> Nginx:
    """nginx in front of moonshot's ports on 127.0.0.1 (``kierki`` None: a port nobody listens
    on), its files under ``workdir``; not waited for (:meth:`Nginx.wait`)."""
    nginx = nginx_path()
    if nginx is None or missing() is not None:
        raise RuntimeError(missing())
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert(HOST, "127.0.0.1")
    chain = workdir / "fullchain.pem"
    key = workdir / "privkey.pem"
    ca_file = workdir / "ca.pem"
    chain.write_bytes(b"".join(c.bytes() for c in cert.cert_chain_pems))
    key.write_bytes(cert.private_key_pem.bytes())
    ca_file.write_bytes(ca.cert_pem.bytes())
    https, plain, sessions_in, kierki_in = (free_port() for _ in range(4))
    logs = workdir / "nginx"
    logs.mkdir(exist_ok=True)
    temp = "".join(
        f"    {what}_temp_path {logs / what};\n" for what in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = render(
        CONF.read_text(),
        {
            "user www-data;": "user root;" if os.geteuid() == 0 else "",
            "pid /run/nginx.pid;": f"pid {logs / 'nginx.pid'};",
            "error_log /var/log/nginx/moonshot.error.log;": f"error_log {logs / 'error.log'} info;",
            "access_log /var/log/nginx/moonshot.access.log;": f"access_log {logs / 'access.log'};\n{temp}",
            "listen 80;": f"listen 127.0.0.1:{plain};",
            "listen 443 ssl;": f"listen 127.0.0.1:{https} ssl;",
            "listen 40405;": f"listen 127.0.0.1:{sessions_in};",
            "listen 5000;": f"listen 127.0.0.1:{kierki_in};",
            "server 127.0.0.1:7380;": f"server 127.0.0.1:{http};",
            "server 127.0.0.1:8080;": f"server 127.0.0.1:{trend};",
            "server 127.0.0.1:40406;": f"server 127.0.0.1:{sessions};",
            "server 127.0.0.1:5001;": f"server 127.0.0.1:{kierki if kierki is not None else free_port()};",
            "/etc/letsencrypt/live/moonshot.example.org/fullchain.pem": str(chain),
            "/etc/letsencrypt/live/moonshot.example.org/privkey.pem": str(key),
        },
    )
    conf_file = workdir / "nginx.conf"
    conf_file.write_text(conf)
    check = subprocess.run([nginx, "-t", "-q", "-c", str(conf_file)], capture_output=True, text=True)
    if check.returncode != 0:
        raise RuntimeError(f"nginx -t: {check.stderr}")
    proc = subprocess.Popen(
        [nginx, "-c", str(conf_file), "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    spki = [spki_hash(ca.cert_pem.bytes()), spki_hash(cert.cert_chain_pems[0].bytes())]
    return Nginx(proc, https, plain, sessions_in, kierki_in, ca_file, spki, logs)


__all__ = ["CONF", "HOST", "Nginx", "free_port", "missing", "render", "spki_hash", "start"]
