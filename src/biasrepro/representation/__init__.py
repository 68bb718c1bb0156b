"""Representation bias of masked language models: CrowS-Pairs, StereoSet and SEAT
(toxicity paper §6.1)."""
