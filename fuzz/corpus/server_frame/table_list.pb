ºA
holdem:3holdem 2(0
#ÿÿÿÿÿÿÿÿÿholdem:0holdem (	0	