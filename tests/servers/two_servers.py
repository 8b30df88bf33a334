"""A module with two servers, so a serve target must name one."""

from baton import Server

first = Server("first")
second = Server("second")
