"""The REST service (Litestar): ``api.app.create_app(settings)``."""
