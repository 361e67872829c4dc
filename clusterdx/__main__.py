from clusterdx.cli import main

main()
