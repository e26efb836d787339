# SPDX-License-Identifier: MIT
"""The tournament hall: tables publish over MQTT, the hall collects and shows them.

- :mod:`bgboard.hall.topics`: the topics, the table names and the broker's URL.
- :mod:`bgboard.hall.outbox`: what a table has to publish, kept in its match store until the
  broker has it, and the message format.
- :mod:`bgboard.hall.publish`: the table's side (:class:`Publisher`, its own MQTT thread).
- :mod:`bgboard.hall.server`: the hall's side: its database, its MQTT client and its page.
- :mod:`bgboard.hall.acl`: the broker's access list and passwords for a list of tables.
- ``static/``: the hall's page.

The table's own modules never import this package: a publisher is attached to a table by
:mod:`bgboard.session`.
"""
