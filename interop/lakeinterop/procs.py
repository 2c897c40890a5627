"""The servers a run starts itself: a free loopback port, and stopping one by its process."""
import signal
import socket
import subprocess


def free_port():
    """A loopback port free now (the caller binds it soon after)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc, sig=signal.SIGTERM, timeout=30):
    """Sends sig to a running proc, then SIGKILL if it has not exited after timeout seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
