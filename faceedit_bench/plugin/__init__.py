"""Plugin loading: ``hookspecs`` (the hook specifications), ``manager`` (loading plugins),
``registry`` (name -> factory tables), ``protocols`` (what components implement), ``payloads`` (what lifecycle
hooks receive), ``sections`` (the report-section interface) and ``needs`` (what a metric or section needs
of the faces).
"""
