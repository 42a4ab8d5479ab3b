"""Code that runs inside the sandbox: the runner, the Python test judge and worker, and their wire format.

Each module imports only the standard library (and the modules here); the
host joins them into one program (:func:`rewardsmith.sandbox.code.runner_source`),
compiled once by the sandbox's Python and sent to each sandbox as marshalled
code, so a sandbox starts without compiling anything. The host imports
:mod:`~rewardsmith.sandbox.inside.wire` and :mod:`~rewardsmith.sandbox.inside.procs`
too, to read results and to pump the sandbox's process.
"""
