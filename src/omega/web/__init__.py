"""The local web page: chat with Omega and the owner's dashboard (see `omega.web.app`)."""
