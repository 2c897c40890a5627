"""The servers a run starts itself: a free loopback port, and stopping one by its process."""
import signal
import socket
import subprocess
import time


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


def tail(path, n=2000):
    """The last n characters (all, for None) of the log at path, or "" when there is none."""
    try:
        with open(path) as f:
            text = f.read()
            return text if n is None else text[-n:]
    except OSError:
        return ""


def wait_ready(proc, name, ready, timeout, log, interval=0.1):
    """Polls ready() until it returns a true value, which it returns.

    ready returns a false value while the server is not serving yet. Fails
    with the log's tail when proc exits first or timeout seconds pass.
    """
    deadline = time.time() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s: %s" % (name, proc.returncode, tail(log)))
        v = ready()
        if v:
            return v
        if time.time() > deadline:
            raise RuntimeError("%s did not start in %ss: %s" % (name, timeout, tail(log)))
        time.sleep(interval)
