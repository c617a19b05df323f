"""The composition root: the one place that builds Omega and runs it.

- runtime: `bootstrap` ($OMEGA_HOME, config, logging, prompts) and `pipeline_deps`
- service: `build_service` (`omega start`), `build_chat` (`omega chat`), `run_service`, `serve`
- channels: the message channels the config enables; jobs: the background jobs, as data
"""

from omega.app.channels import StartError
from omega.app.jobs import Job
from omega.app.runtime import Runtime, bootstrap, pipeline_deps
from omega.app.service import Service, build_chat, build_service, run_service, serve

__all__ = [
    "Job",
    "Runtime",
    "Service",
    "StartError",
    "bootstrap",
    "build_chat",
    "build_service",
    "pipeline_deps",
    "run_service",
    "serve",
]
