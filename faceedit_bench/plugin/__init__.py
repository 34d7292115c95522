"""Plugin loading: ``hookspecs`` (the hook specifications), ``manager`` (loading plugins),
``registry`` (name -> factory tables), ``protocols`` (what components implement), ``payloads`` (what lifecycle
hooks receive) and ``sections`` (the report-section interface).
"""
