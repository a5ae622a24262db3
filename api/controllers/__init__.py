"""HTTP controllers, one module per resource group."""
