"""Human seats: the seat desk (every seat's turn and view), the seat page and lobby, and the aiohttp server.

A runner's human agent (``agents.human``) asks its turn at the desk; a person answers through the page. The
execution layer runs the server in a Ray actor on the driver's node (``execution.seat_actor``); this package knows
no Ray.
"""
