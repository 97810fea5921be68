"""examples/python_positions.py prints the positions of its processor-style prompt."""
import os
import subprocess
import sys

import golden

EXAMPLES = os.path.join(golden.REPO_DIR, "examples")


def test_example_prints_positions():
    result = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, "python_positions.py"), "--model", "qwen2_5_vl",
         os.path.join(EXAMPLES, "python_image_prompt.json")],
        capture_output=True, text=True, check=True)
    lines = [line.strip() for line in result.stdout.splitlines()]
    # Row 0: text, then the image's 4 tokens share t and spread over h and w.
    assert "row 0  (delta -2, next tokens at [9, 10, 11])" in lines
    assert "t: [0, 1, 2, 3, 4, 4, 4, 4, 6, 7, 8]" in lines
    assert "w: [0, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8]" in lines
    # Row 1: left padding holds 1 (HF), the text-only row counts from 0.
    assert "t: [1, 1, 1, 1, 1, 1, 1, 0, 1, 2, 3]" in lines
