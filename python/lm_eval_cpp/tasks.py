"""``TaskManager``: the names lm-eval knows (its built-in tasks, --include_path folders and the
reference's library when one is found), listed and matched as the reference's
lm_eval.tasks.TaskManager lists and matches them."""

import fnmatch
import os

from . import _lmeval


class TaskManager:
    def __init__(self, verbosity=None, include_path=None, include_defaults=True, metadata=None):
        if include_path is None:
            paths = []
        elif isinstance(include_path, (list, tuple)):
            paths = [os.fspath(p) for p in include_path]
        else:
            paths = [os.fspath(include_path)]
        self.include_path = include_path
        self.metadata = metadata
        self._paths = paths
        names = _lmeval.index_names(paths, bool(include_defaults))
        self._all_tasks = names["all_tasks"]
        self._all_subtasks = names["all_subtasks"]
        self._all_groups = names["all_groups"]
        self._all_tags = names["all_tags"]

    @property
    def all_tasks(self):
        return self._all_tasks

    @property
    def all_subtasks(self):
        return self._all_subtasks

    @property
    def all_groups(self):
        return self._all_groups

    @property
    def all_tags(self):
        return self._all_tags

    def match_tasks(self, task_list):
        # utils.pattern_match: fnmatch.filter over all names, as a sorted set.
        if isinstance(task_list, str):
            task_list = [task_list]
        found = set()
        for pattern in task_list:
            found.update(fnmatch.filter(self._all_tasks, pattern))
        return sorted(found)
