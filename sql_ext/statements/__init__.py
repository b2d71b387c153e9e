"""One module per statement family, each answering `run(session, statement)` and, without a JVM
where it can, `local(ctx, statement)`; `routes.ROUTES` maps statement types to them."""
