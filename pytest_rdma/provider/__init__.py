"""The provider side: discovering devices, identifying their drivers, opening them."""
