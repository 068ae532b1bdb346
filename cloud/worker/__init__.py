"""The cloud worker behind Redis: pulls GenerateRequests from the request streams (streams),
streams GenerateChunks to each reply stream, each write fenced to the worker's own turn at the
request (fenced_reply), and resumes requests of workers that died (redis_worker). It runs any
engine through shared.async_engine and shared.serve_generate, as the gRPC server does.

May import: shared; never cloud.engine, cloud.models, cloud.layers or cloud.kernels (the CLI
builds the engine and hands it over).
"""
