"""omega-quant: advisory signals from price bars (Kalman, Hurst, HMM, Merton, Kelly), a replay
tool, a live feed and a guarded executor. Nothing here involves the AI model.

Import the submodules directly (`omega.quant.engine`): this package imports numpy, which the
rest of Omega does not need, so `omega.quant` itself stays empty of heavy imports.
"""
