"""The leakage check: every trained model's fitted texts against every set it is scored on.

Scoring (predict_{task}, biasfinder_predict) waits for the verdict of each set it scores
(leakage_gate), so a configuration in which a model would be scored on a text it was fitted
on produces no tables; a verdict holds that set alone, so changing one set re-scores that set
and nothing else. leakage_check writes the task's whole report."""

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


rule leakage_gate:
    """One scored set's leakage verdict (as leakage_check, for this set only)."""
    input:
        gate_inputs,
    output:
        json=layout.leakage_gate("{task}", "{scored}"),
        md=layout.leakage_gate("{task}", "{scored}").removesuffix(".json") + ".md",
    wildcard_constraints:
        scored=alternation({n for t in TASK_METHODS for n in (*SCORED_SETS[t], *biasfinder_scored(t))}),
    params:
        plan=lambda w: json.dumps(gate_plan(w.task, w.scored), sort_keys=True),
        settings=lambda w: settings(f"leakage.identical_texts.{w.task}"),
    log:
        job_log("leakage_gate/{task}/{scored}"),
    benchmark:
        job_benchmark("leakage_gate/{task}/{scored}")
    resources:
        **compute("light"),
    conda:
        CONDA_ENV
    shell:
        biasrepro("leakage --plan {params.plan:q}"
                  " --settings {params.settings:q} --out-json {output.json:q} --out-md {output.md:q}")
