R4
v1.42.1767225600.c2lnbmF0dXJlbot/0.1 ünïcödé