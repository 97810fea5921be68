"""Runs position ids through an installed transformers' own text rotary module, in the process
the test starts for that transformers (its directory first on sys.path).

stdin: pickle {"module": "<model>.modeling_<model>.<RotaryClass>", "config":
"<model>.configuration_<model>.<TextConfigClass>", "config_values": text_config of a
config.json, "positions": [[3, B, L] int64 arrays]}.
stdout: pickle {"version", "results": [{cos, sin}] (float32 numpy, as the module returns them
for a float32 input), "source": "path:line of the module's forward"}.
"""
import importlib
import inspect
import pickle
import sys

import torch
import transformers


def _attribute(path):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module("transformers.models." + module), name)


def main():
    request = pickle.load(sys.stdin.buffer)
    config = _attribute(request["config"])(**request["config_values"])
    rotary = _attribute(request["module"])(config)
    results = []
    for positions in request["positions"]:
        positions = torch.from_numpy(positions)
        x = torch.zeros(positions.shape[1], positions.shape[2], 1, dtype=torch.float32)
        cos, sin = rotary(x, positions)
        results.append({"cos": cos.numpy(), "sin": sin.numpy()})
    forward = inspect.unwrap(type(rotary).forward)  # under its decorators
    source = inspect.getsourcefile(forward).split("site-packages/")[-1]
    pickle.dump({"version": transformers.__version__, "results": results,
                 "source": f"{source}:{inspect.getsourcelines(forward)[1]}"}, sys.stdout.buffer)


if __name__ == "__main__":
    main()
