"""lm-eval's C++ evaluator as a Python package: the reference's ``simple_evaluate`` and
``TaskManager`` (lm_eval 0.4.13) over the same library the ``lm-eval`` command runs.

    import lm_eval_cpp
    results = lm_eval_cpp.simple_evaluate(
        model="hf", model_args="pretrained=/path/to/checkpoint", tasks=["arc_easy"], limit=100)
    print(results["results"]["arc_easy"]["acc,none"])
"""

import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
# The task library and plugins travel with the package (a wheel's copies, or links into the
# build folder): lm-eval finds them through these variables, as this process is no lm-eval.
for _var, _dir in (("LMEVAL_TASKS_DIR", "tasks"), ("LMEVAL_PLUGIN_DIR", "plugins")):
    if not os.environ.get(_var) and os.path.isdir(os.path.join(_here, _dir)):
        os.environ[_var] = os.path.join(_here, _dir)

# RTLD_GLOBAL: the hf plugin, opened by the extension, resolves lm-eval's symbols from it.
_flags = sys.getdlopenflags()
sys.setdlopenflags(_flags | os.RTLD_GLOBAL)
try:
    from . import _lmeval
finally:
    sys.setdlopenflags(_flags)

from .evaluator import simple_evaluate  # noqa: E402
from .tasks import TaskManager  # noqa: E402

UserError = _lmeval.UserError
__version__ = _lmeval.__version__
__all__ = ["simple_evaluate", "TaskManager", "UserError"]
