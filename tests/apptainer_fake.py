"""A stand-in for the ``apptainer`` command, for tests on machines without Apptainer.

It appends each call's arguments and working directory, as one JSON line, to
``$FAKE_APPTAINER_LOG`` and answers the three calls Snakemake makes
(snakemake/deployment/singularity.py):

* ``apptainer --version``: a version Snakemake accepts (it needs 1.0.0 or later);
* ``apptainer pull --name NAME URL``: writes an empty image file NAME;
* ``apptainer exec --home DIR [ARGS...] IMAGE SHELL -c COMMAND``: runs ``SHELL -c COMMAND``
  on the host the way the image would run it: ``PATH`` is ``$FAKE_APPTAINER_PATH`` (the
  image's PATH, with this environment standing in for the image's venv) and ``HOME`` is DIR.
  Like Apptainer it fails when IMAGE is not a file.
"""

import json
import os
import sys


def main(argv: list[str]) -> int:
    with open(os.environ["FAKE_APPTAINER_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"argv": argv, "cwd": os.getcwd()}) + "\n")
    if argv == ["--version"]:
        print("apptainer version 1.3.4")
        return 0
    if argv[:1] == ["pull"]:
        with open(argv[argv.index("--name") + 1], "wb"):
            return 0
    if argv[:2] == ["exec", "--home"] and argv[-2] == "-c":
        image, shell, _, command = argv[-4:]
        if not os.path.isfile(image):
            print(f"FATAL: could not open image {image}", file=sys.stderr)
            return 255
        env = dict(os.environ, PATH=os.environ["FAKE_APPTAINER_PATH"], HOME=argv[2])
        os.execvpe(shell, [shell, "-c", command], env)
    print(f"fake apptainer: unexpected call {argv}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
