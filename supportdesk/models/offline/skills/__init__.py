"""The specialists' skills, one module each (the specialist in ../specialist.py combines them).

- `money` (a package of its own, split by what each part does): charges, duplicates, refunds
  within the level's limit, credits, invoices' charges, and the offers a "yes" takes up;
- `account`: who the customer is (find the account, ask for its email), cancellations, plan
  changes and prices, payment methods, the next payment, invoices;
- `technical`: the knowledge base's steps, password resets, bug reports and tickets;
- `senior`: what goes up a level (escalations) and what a level-2 agent takes from level 1;
- `generic`: an agent defined only in the desk file, using its own tools by their descriptions.

Each skill is a mixin of `Specialist`: it reads `self.view` and answers through `self.step`;
`common.SkillBase` declares what the skills use of one another.
"""
