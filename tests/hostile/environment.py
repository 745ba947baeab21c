# environment.py: fails to load when it sees a variable of dlqspec's environment beyond what an
# interpreter needs (the test sets a marker among them); otherwise it is the honest solution.
import os

ALLOWED = {"PATH", "LANG", "LANGUAGE", "TZ", "HOME", "TMPDIR", "TMP", "TEMP", "DLQSPEC_TREE",
           "PYENV_ROOT", "PYENV_VERSION", "VIRTUAL_ENV", "NODE_PATH",
           # What pyenv's own shim sets before it execs Python.
           "PYENV_DIR", "PYENV_HOOK_PATH", "_PYENV_INSTALL_PREFIX", "PWD", "SHLVL", "OLDPWD", "_"}
extra = sorted(k for k in os.environ if k not in ALLOWED and not k.startswith("LC_"))
if extra:
    raise RuntimeError("environment beyond the allowlist: " + ", ".join(extra))

from honest import DLQConsumer, RetryQueue  # noqa: E402,F401
