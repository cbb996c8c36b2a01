"""Errors caused by the user's input: reported as one clear message, never a traceback."""


class UserError(Exception):
    """Bad input (a file, an argument, a run folder): the message names the problem and where."""


class CatalogError(UserError):
    """A catalogue file with one or more problems; ``problems`` holds one message per problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))
