"""pytest options of the differential tests (test_reference_*.py, run by
//python:pytest_references):

    --cases N               prompts per family and reference (default 250; CI runs the default)
    --seed S                the prompts' seed (default 0): another seed, other prompts
    --generate-cases G      of those, how many the Omni thinkers' generate() decodes (default
                            64: a tiny model's generate() costs 50-150 ms a prompt)
    --without-references    leaves them out (//python:pytest, which also runs under ASan)
    --without FILE          leaves python/tests/FILE out (a target of its own runs it)
"""


def pytest_addoption(parser):
    group = parser.getgroup("mrope references")
    group.addoption("--cases", type=int, default=250,
                    help="random prompts per family and reference (default 250)")
    group.addoption("--seed", type=int, default=0, help="seed of the random prompts (default 0)")
    group.addoption("--generate-cases", type=int, default=64,
                    help="prompts the Omni thinkers' generate() decodes (default 64)")
    group.addoption("--without-references", action="store_true",
                    help="do not collect test_reference_*.py")
    group.addoption("--without", action="append", default=[], metavar="FILE",
                    help="do not collect python/tests/FILE (a target of its own runs it)")


def pytest_ignore_collect(collection_path, config):
    if config.getoption("without_references") and collection_path.name.startswith(
            "test_reference_"):
        return True
    if collection_path.name in config.getoption("without"):
        return True
    return None
