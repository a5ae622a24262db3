(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(impl_item type: [
  (type_identifier) @name
  (generic_type type: (type_identifier) @name)
  (scoped_type_identifier name: (type_identifier) @name)
  (generic_type type: (scoped_type_identifier name: (type_identifier) @name))]) @definition.impl
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function

(call_expression function: (_) @callee) @call

(use_declaration argument: (scoped_identifier) @import.module) @import
(use_declaration argument: (use_as_clause path: (_) @import.module alias: (identifier) @import.alias)) @import
(scoped_use_list path: (_) @import.module list: (use_list (identifier) @import.name)) @import
(scoped_use_list path: (_) @import.module list: (use_list (use_as_clause path: (identifier) @import.name alias: (identifier) @import.alias))) @import
