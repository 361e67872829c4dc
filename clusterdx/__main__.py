from clusterdx.start import run

run()
