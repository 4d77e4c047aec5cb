"""What riskapi asks of the machine, whatever it is doing: files written whole and synced, locks, and
child processes that end with their parent."""
