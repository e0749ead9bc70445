"""What happens to an effort: the state table (:mod:`.states`), the lifecycle (the only code that
changes an effort's state), the operations shared by the model's tools and the user's actions, the
summaries, salience (decay and eviction), proposals for models that do not manage efforts, and the
working context the efforts make. Imports :mod:`..models`, :mod:`..session`, :mod:`..manifest`,
:mod:`..storage` and :mod:`..text`.
"""
