"""The leakage check: every trained model's fitted texts against every set it is scored on.

Scoring (predict_{task}, biasfinder_predict) waits for it, so a configuration in which a
model would be scored on a text it was fitted on produces no tables."""

import json


include: "helpers/leakage.smk"


rule leakage_check:
    """Fail when a model's training or validation texts are in a set it is scored on
    (whitespace-folded, case-sensitive exact match, hashed); report every overlap."""
    input:
        leakage_inputs,
    output:
        json="results/{task}/leakage.json",
        md="results/{task}/leakage.md",
    params:
        plan=lambda w: json.dumps(leakage_plan(w.task), sort_keys=True),
        settings=lambda w: settings(f"leakage.identical_texts.{w.task}"),
    log:
        job_log("leakage_check/{task}"),
    benchmark:
        job_benchmark("leakage_check/{task}")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("leakage --plan {params.plan:q}"
                  " --settings {params.settings:q} --out-json {output.json:q} --out-md {output.md:q}")
