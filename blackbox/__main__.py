from blackbox.cli import main

main()
