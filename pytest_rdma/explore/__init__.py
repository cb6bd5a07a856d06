"""Stateful exploration from the catalogue's contracts (`--rdma-explore SECONDS`, issue 25 item 5).

Roles, one module each:
- sequence.py: a step of a generated sequence and a finding, as plain data (JSON both ways);
- rules.py: the rules, read from each verb's contract and its parameters' domains (pure);
- machine.py: a Hypothesis RuleBasedStateMachine built from those rules, with a Bundle per resource kind;
- execute.py: a step run through the suite's one call layer, on a check's context;
- runner.py: the exploring process (one per device): the machine under the guards, findings to a journal;
- session.py: the controller's side: runs the explorer in its own process with a time limit per call, and
  reads its findings back;
- items.py: every finding, and the exploration itself, as a check of the suite (`test_explore[...]`).
"""
