# program: e2e_basic
# Printing structs, arrays, a pointer to a struct, a union; writing memory.
target remote @TARGET@
break e2e_basic.c:55
continue
print p
print box
print *sp
print sp->corner[1]
print sp->name
print squares
print squares[3]@2
print w
print/x w
print &box
ptype struct shape
ptype w
whatis sp
set var p.x = 10
print p
set var squares[0] = -5
print squares
print global_counter * 2 + p.y
print leaf(20)
continue
