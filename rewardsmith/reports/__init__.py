"""What the audit (``check/``) and evaluation jobs (``evaluation/``) show people, shared by both.

* :mod:`~rewardsmith.reports.pages`: self-contained HTML pages (everything from the data escaped);
* :mod:`~rewardsmith.reports.progress`: rows done and the time left, on standard error.
"""
