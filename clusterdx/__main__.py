from clusterdx.start import main

main()
