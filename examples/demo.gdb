break sum if n == 0
continue
backtrace
up 5
print *list
info locals
echo \n--- on to the end of main ---\n
tbreak 32
continue
print total
echo \n--- back in time ---\n
reverse-step
backtrace
info locals
reverse-finish
info locals
reverse-continue
backtrace
monitor when
echo \n--- and forward again ---\n
delete
continue
continue
