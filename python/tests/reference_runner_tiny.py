"""Runs greedy generate() of tiny random-weight models (tiny_models.py) with transformers' own
positions and with mrope's, in the process the test starts for one transformers release (its
directory first on sys.path, mrope importable).

stdin: pickle {"families": {family: {"ids": FAMILY_CONFIG row, "preset": name, "overrides":
dict, "prompts": [reference_prompts prompts]}}, "max_new_tokens": N}.
stdout: pickle {"version", "families", "results": {family: [per prompt {variant: {"tokens":
[B, N] generated ids, "logits_diff": max |logits - own logits| over the N steps, "mrope_calls":
how many times mrope computed positions; "own" also "decode": the positions [3, B, N - 1] its
text rotary received at the decode steps}}]}, "enable": {family: what enable() replaced},
"warnings": [enable()'s warnings], "not_restored": [families whose class disable() left
patched]}.

Variants: "own" (transformers' get_rope_index), "mrope" (the instance's get_rope_index is the
test's preset's: integrations.transformers.use), "enable_classes" / "enable_instance"
(integrations.transformers.enable() / enable(model), the installed release's convention),
"swapped" (mrope's positions with height and width exchanged, on the first prompt with an image:
shows the comparison sees a wrong position).
"""
import pickle
import sys
import warnings

import torch

import mrope
from mrope.integrations import transformers as mrope_hf
import tiny_models


class _Counting:
    """An mrope.Model whose get_rope_index calls are counted (and, `swap`, its height and width
    exchanged)."""

    def __init__(self, model, swap=False):
        self.model, self.swap, self.calls = model, swap, 0
        self.family, self._impl = model.family, model._impl

    def get_rope_index(self, *args, **kwargs):
        self.calls += 1
        positions, deltas = self.model.get_rope_index(*args, **kwargs)
        return (positions[[0, 2, 1]] if self.swap else positions), deltas


def _generate(model, kwargs, steps):
    with torch.no_grad():
        out = model.generate(**kwargs, max_new_tokens=steps, min_new_tokens=steps,
                             do_sample=False, output_logits=True, return_dict_in_generate=True)
    return out.sequences[:, -steps:], torch.stack(out.logits)


def _inner(model, family):
    """The submodule whose get_rope_index computes the positions."""
    name = mrope_hf.FAMILIES[family][1]
    return next(m for m in model.modules() if type(m).__name__ == name)


def _counted_enable(target=None):
    """enable(target), with every mrope.Model it makes counted; the counter list."""
    made = []
    original = mrope_hf._mrope_model

    def counted(*args, **kwargs):
        made.append(_Counting(original(*args, **kwargs)))
        return made[-1]
    mrope_hf._mrope_model = counted
    return made, lambda: setattr(mrope_hf, "_mrope_model", original)


def run_family(family, request, steps, report):
    model = tiny_models.build(family, request["ids"])
    inner = _inner(model, family)
    ours = mrope.Model.from_config(request["preset"],
                                   overrides={**request["ids"], **request["overrides"]})
    results, swapped = [], False
    for index, prompt in enumerate(request["prompts"]):
        kwargs = tiny_models.inputs(family, prompt, seed=index)
        decode, (tokens, logits) = tiny_models.decode_positions(
            model, lambda: _generate(model, kwargs, steps))
        variants = {}

        def record(name, counters):
            their_tokens, their_logits = _generate(model, kwargs, steps)
            variants[name] = {"tokens": their_tokens.numpy(),
                              "logits_diff": float((their_logits - logits).abs().max()),
                              "mrope_calls": sum(c.calls for c in counters)}

        variants["own"] = {"tokens": tokens.numpy(), "logits_diff": 0.0, "mrope_calls": 0,
                           "decode": decode}
        counting = _Counting(ours)
        mrope_hf.use(inner, counting)
        record("mrope", [counting])
        mrope_hf.disable(model)
        if not swapped and prompt["image_grid_thw"] is not None:
            counting = _Counting(ours, swap=True)
            mrope_hf.use(inner, counting)
            record("swapped", [counting])
            mrope_hf.disable(model)
            swapped = True
        for name, target in (("enable_classes", None), ("enable_instance", model)):
            made, restore = _counted_enable()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                replaced = mrope_hf.enable(target)
            report["warnings"].extend(str(w.message) for w in caught)
            report["enable"].setdefault(family, {})[name] = replaced
            record(name, made)
            restore()
            mrope_hf.disable(target)
        results.append(variants)
    return results


def main():
    request = pickle.load(sys.stdin.buffer)
    import transformers  # pylint: disable=import-outside-toplevel
    classes = {family: cls for family, cls in mrope_hf._classes().items() if cls is not None}
    originals = {family: cls.__dict__.get("get_rope_index") for family, cls in classes.items()}
    report = {"version": transformers.__version__, "families": tiny_models.families(),
              "results": {}, "enable": {}, "warnings": []}
    for family, family_request in request["families"].items():
        report["results"][family] = run_family(family, family_request,
                                               request["max_new_tokens"], report)
    report["not_restored"] = [family for family, cls in classes.items()
                              if cls.__dict__.get("get_rope_index") is not originals[family]]
    pickle.dump(report, sys.stdout.buffer)


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
