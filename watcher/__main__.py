from watcher.cli import main

main()
