"""Plugin loading: ``hookspecs`` (the hook specifications), ``manager`` (loading plugins),
``registry`` (name -> factory tables), ``protocols`` (what components implement), ``payloads`` (what lifecycle
hooks receive), ``sections`` (the report-section interface), ``launch`` (what a launch did, as sections read it)
and ``needs`` (what a metric or section needs of the faces).
"""
